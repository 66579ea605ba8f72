// Owns what the command line prints: plain lines and aligned columns for people (colour only when
// the stream is a terminal, through picocolors: no hand-written escape codes), JSON for scripts
// (--json), errors on stderr, and a spinner on stderr for waits over a second (nanospinner, TTY only).
import pc from 'picocolors';
import { createSpinner } from 'nanospinner';

export type Colors = ReturnType<typeof pc.createColors>;
export type Paint = keyof Omit<Colors, 'isColorSupported'>;

/** Colour when the stream is a terminal, unless NO_COLOR; FORCE_COLOR turns it on anywhere. */
export function colorsFor(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): Colors {
  const forced = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0';
  return pc.createColors(forced || (Boolean(stream.isTTY) && !('NO_COLOR' in env) && env.TERM !== 'dumb'));
}

/** One table cell: its text, and a colour applied after padding so columns stay aligned. */
export interface Cell {
  text: string;
  paint?: Paint;
}

export type Row = Array<string | Cell>;

const asCell = (value: string | Cell): Cell => (typeof value === 'string' ? { text: value } : value);

/** How long a wait lasts before a spinner appears. */
const SPINNER_AFTER_MS = 1000;

export class Output {
  readonly colors: Colors;
  readonly errColors: Colors;

  constructor(readonly json: boolean, private readonly stdout: NodeJS.WriteStream = process.stdout, private readonly stderr: NodeJS.WriteStream = process.stderr) {
    this.colors = colorsFor(stdout);
    this.errColors = colorsFor(stderr);
  }

  line(text = ''): void {
    this.stdout.write(`${text}\n`);
  }

  /** A note for the person at the terminal (stderr, so stdout stays clean for pipes). */
  note(text: string): void {
    this.stderr.write(`${this.errColors.dim(text)}\n`);
  }

  /** One JSON document (or one NDJSON line while streaming). */
  data(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value)}\n`);
  }

  error(message: string): void {
    this.stderr.write(`${this.errColors.red('error:')} ${message}\n`);
  }

  /** Rows under a header, each column as wide as its widest cell. */
  table(header: string[], rows: Row[]): void {
    const cells = rows.map((row) => row.map(asCell));
    const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]?.text.length ?? 0)));
    const render = (row: Cell[]) => row
      .map((cell, i) => {
        const padded = i === row.length - 1 ? cell.text : cell.text.padEnd(widths[i]);
        return cell.paint ? this.colors[cell.paint](padded) : padded;
      })
      .join('  ')
      .trimEnd();
    this.line(this.colors.bold(render(header.map((text) => ({ text })))));
    for (const row of cells) this.line(render(row));
  }

  /** One streamed line in fixed-width columns (a table whose rows come one at a time). */
  columns(cells: Array<Cell & { width?: number }>): void {
    this.line(cells.map((cell, i) => {
      const padded = cell.width && i < cells.length - 1 ? cell.text.padEnd(cell.width) : cell.text;
      return cell.paint ? this.colors[cell.paint](padded) : padded;
    }).join('  ').trimEnd());
  }

  /** Await `work`; if it takes over a second on a terminal, show a spinner with `label` meanwhile. */
  async wait<T>(label: string, work: Promise<T>): Promise<T> {
    if (this.json || !this.stderr.isTTY) return work;
    let spinner: ReturnType<typeof createSpinner> | undefined;
    const timer = setTimeout(() => {
      spinner = createSpinner(label, { stream: this.stderr }).start();
    }, SPINNER_AFTER_MS);
    try {
      return await work;
    } finally {
      clearTimeout(timer);
      if (spinner) spinner.stop(); // clears its line and shows the cursor again
    }
  }

  /** Resolve once both streams have written what they hold (before process.exit). */
  flushed(): Promise<void> {
    const drain = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => stream.write('', () => resolve()));
    return Promise.all([drain(this.stdout), drain(this.stderr)]).then(() => undefined);
  }
}
