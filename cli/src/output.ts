import { stdout, stderr } from 'node:process';

/** Colours only when writing to a terminal, and never with NO_COLOR set (no-color.org). */
const colours = (stream: NodeJS.WriteStream) => stream.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
const paint = (code: number, stream: NodeJS.WriteStream) => (text: string) => (colours(stream) ? `\u001b[${code}m${text}\u001b[0m` : text);

export const style = {
  dim: paint(2, stdout),
  bold: paint(1, stdout),
  green: paint(32, stdout),
  red: paint(31, stdout),
  yellow: paint(33, stdout),
  cyan: paint(36, stdout),
  errorRed: paint(31, stderr),
};

/** An HTTP status coloured by class. */
export const statusText = (status: number | undefined) =>
  status === undefined ? style.red('---') : status < 300 ? style.green(String(status)) : status < 500 ? style.yellow(String(status)) : style.red(String(status));

export function printJson(value: unknown): void {
  stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** One JSON document a line, for streams of records (`--json` on tail, listen, sub). */
export function printJsonLine(value: unknown): void {
  stdout.write(`${JSON.stringify(value)}\n`);
}

/** A table of `rows` under `columns`, padded; empty cells as `-`. */
export function printTable(columns: string[], rows: (string | number | boolean | null | undefined)[][]): void {
  const cells = rows.map((row) => row.map((cell) => (cell === undefined || cell === null || cell === '' ? '-' : String(cell))));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((row) => visible(row[i] ?? '').length)));
  const line = (row: string[]) => row.map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat(widths[i]! - visible(cell).length))).join('  ');
  stdout.write(`${style.bold(line(columns))}\n`);
  for (const row of cells) stdout.write(`${line(row)}\n`);
}

const visible = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '');

export function info(text: string): void {
  stderr.write(`${text}\n`);
}
