/**
 * Command output. With `--json` a command prints exactly one JSON object on stdout, so scripts can
 * parse it; without, one human-readable report. Anything else a command says goes to stderr.
 */
export const report = (json: boolean, result: object, human: string): void => {
  process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${human}\n`);
};

/** A progress or status message: stderr, so it never mixes with a command's result. */
export const note = (message: string): void => {
  process.stderr.write(`${message}\n`);
};
