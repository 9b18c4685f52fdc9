/**
 * Parses `500ms`, `30s`, `2m`, `1h`, `1.5s` or bare seconds (`90`) into milliseconds.
 * `what` names the setting in the error message ("ttl", "heartbeat", ...).
 */
export declare function parseDuration(value: string | number, what: string): number;
/** Formats milliseconds for people: 450ms, 30s, 2m30s, 1h5m. */
export declare function formatDuration(ms: number): string;
