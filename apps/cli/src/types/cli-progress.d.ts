// The part of cli-progress 3 the CLI uses (the package ships no types; @types/cli-progress is not installed).
declare module "cli-progress" {
  export interface Options {
    format?: string;
    stream?: NodeJS.WritableStream;
    hideCursor?: boolean;
    clearOnComplete?: boolean;
    stopOnComplete?: boolean;
    etaBuffer?: number;
  }
  export interface Preset {
    barCompleteChar: string;
    barIncompleteChar: string;
    format?: string;
  }
  export class SingleBar {
    constructor(options: Options, preset?: Preset);
    start(total: number, startValue: number, payload?: Record<string, unknown>): void;
    update(current: number, payload?: Record<string, unknown>): void;
    setTotal(total: number): void;
    stop(): void;
  }
  export const Presets: { readonly shades_classic: Preset; readonly shades_grey: Preset; readonly rect: Preset; readonly legacy: Preset };
  const cliProgress: { SingleBar: typeof SingleBar; Presets: typeof Presets };
  export default cliProgress;
}
