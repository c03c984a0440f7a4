/** The path of a working Chromium; throws saying what is missing. */
export function chromiumPath(): Promise<string>;
