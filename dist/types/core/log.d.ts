/**
 * Structured log lines with stable event names, so logs can be searched and dashboards built:
 *   leasefence event=acquire_lock resource="o/r" token=4 owner="..."
 * Adapters choose the sink (stderr for the CLI, core.info for the action).
 */
export type LeaseEvent = 'acquire_lock' | 'renew_lock' | 'renew_failed' | 'lock_lost' | 'release_lock' | 'release_skipped' | 'lock_busy' | 'lock_waiting' | 'lock_stuck' | 'force_release_lock' | 'gate_passed' | 'gate_refused';
export type LogSink = (line: string) => void;
export declare function setLogSink(s: LogSink): void;
export declare function formatEvent(event: LeaseEvent, fields?: Record<string, unknown>): string;
export declare function logEvent(event: LeaseEvent, fields?: Record<string, unknown>): void;
