import { crc32, deflateSync } from 'node:zlib';

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  return Buffer.concat([length, body, crc]);
}

/**
 * A complete, valid PNG of `width` x `height` (1-bit grayscale): all black, or with `noise`
 * pseudo-random pixels that do not compress (a realistic size for a photo or a generated image).
 */
export function pngBytes(width: number, height: number, noise = false): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // grayscale
  const rowBytes = 1 + Math.ceil(width / 8);
  const pixels = Buffer.alloc(rowBytes * height);
  let seed = 0x2545f491;
  if (noise) {
    for (let i = 0; i < pixels.length; i++) {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      pixels[i] = i % rowBytes === 0 ? 0 : seed & 0xff;
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(pixels)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The PNG as a `data:` URL. */
export function pngDataUrl(width: number, height: number): string {
  return `data:image/png;base64,${pngBytes(width, height).toString('base64')}`;
}

/** A minimal PDF with `pages` pages (page objects in the clear, as most PDF writers emit them). */
export function pdfBytes(pages: number): Buffer {
  const kids = Array.from({ length: pages }, (_, i) => `${3 + i} 0 R`).join(' ');
  let body = `%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [${kids}] /Count ${pages} >> endobj\n`;
  for (let i = 0; i < pages; i++)
    body += `${3 + i} 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >> endobj\n`;
  return Buffer.from(`${body}trailer << /Root 1 0 R >>\n%%EOF\n`, 'latin1');
}
