/** `header` and `lines` as columns padded to their widest cell, a dashed rule under the header. */
export function textTable(header: readonly string[], lines: readonly string[][]): string {
  const widths = header.map((h, k) => Math.max(h.length, ...lines.map((l) => l[k]!.length)));
  const render = (cells: readonly string[]) =>
    cells
      .map((c, k) => c.padEnd(widths[k]!))
      .join('  ')
      .trimEnd();
  return [render(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(render)].join('\n');
}
