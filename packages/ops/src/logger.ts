import { pino, type Logger } from "pino";

/** Structured JSON logs on stdout (pino): one line per event, cheap enough for the hot path. */
export const createLogger = (name: string, level: string): Logger => pino({ name, level });
