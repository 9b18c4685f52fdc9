import { LeasefenceError } from '../core/errors';
/** The slot's dev server did not answer 2xx in time. */
export declare class NotReadyError extends LeasefenceError {
    constructor(message: string);
}
export interface ReadyOptions {
    slot: number;
    port: number;
    /** HTTP path to ask (default /). */
    path?: string;
    /** Hosts to try; the first that answers 2xx wins. Default 127.0.0.1 and ::1. */
    hosts?: string[];
    timeoutMs?: number;
    /** Per request. */
    requestTimeoutMs?: number;
    pollMs?: number;
    signal?: AbortSignal;
}
export interface ReadyResult {
    url: string;
    status: number;
    waitedMs: number;
    attempts: number;
}
/**
 * Polls http://<host>:<port><path> until it answers 2xx. Fails with NotReadyError naming the slot, the
 * port and the last thing seen (connection refused, HTTP 503, ...).
 */
export declare function waitReady(opts: ReadyOptions): Promise<ReadyResult>;
