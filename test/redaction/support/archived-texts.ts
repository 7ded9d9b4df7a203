import { MESSAGE_CODECS } from '../../../src/core/messages/formats/detect-format.js';
import type { MessageFormat } from '../../../src/core/messages/message.js';
import { artifactsOf } from '../../../src/core/preflight/outcome/archive-originals.js';
import { crossingSeams, redactJoined } from '../../../src/core/redaction/split-secrets.js';

/**
 * The archive's texts of a cascade over `raws` (messages in `format`): given which messages it
 * folded and which it rewrote as `kind`, the artifacts as the archive redacts them (each seam
 * crossing its artifact cut by `redactJoined`).
 */
export function archivedTextsOf(
  raws: readonly Record<string, unknown>[],
  format: MessageFormat,
  redact: Parameters<typeof redactJoined>[2],
  kind: string,
): (folded: number[], rewritten?: number[]) => string[] {
  const codec = MESSAGE_CODECS[format];
  const items = raws.map((raw, index) => ({
    entry: { parsed: codec.parse(raw, index) },
    id: `m${index}`,
    index,
  }));
  return (folded, rewritten = []) => {
    const cascade = {
      rewrites: rewritten.map((index) => ({
        item: items[index],
        rewrite: { ref: `${kind}-${index}`, kind },
      })),
      folded: folded.map((index) => items[index]),
      summary: { version: 1 },
    };
    return artifactsOf(cascade as never, 1, items as never).map((artifact) =>
      redactJoined(artifact.text, crossingSeams(artifact.seams ?? [], redact), redact),
    );
  };
}
