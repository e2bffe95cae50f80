/**
 * Go's text/tabwriter: tab-terminated cells aligned in column blocks — runs
 * of consecutive lines that have a cell in that column. `describe` prints
 * through it (min width 0, padding 2), as kubectl's describers do.
 */
export function tabwrite(text: string, minWidth = 0, padding = 2): string {
  const lines = text.split('\n').map((l) => l.split('\t'));
  const out: string[] = [];
  const widths: number[] = [];
  const write = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const cells = lines[i]!;
      out.push(cells.map((c, j) => (j < cells.length - 1 && j < widths.length ? c.padEnd(widths[j]!) : c)).join(''));
    }
  };
  const format = (line0: number, line1: number) => {
    const column = widths.length;
    for (let i = line0; i < line1; i++) {
      if (column >= lines[i]!.length - 1) continue;
      write(line0, i);
      line0 = i;
      let width = minWidth;
      for (; i < line1; i++) {
        const cells = lines[i]!;
        if (column >= cells.length - 1) break;
        width = Math.max(width, cells[column]!.length + padding);
      }
      widths.push(width);
      format(line0, i);
      widths.pop();
      line0 = i;
      i--;
    }
    write(line0, line1);
  };
  format(0, lines.length);
  return out.join('\n');
}
