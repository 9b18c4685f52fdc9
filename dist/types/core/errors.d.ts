/** Every error leasefence raises on purpose carries a stable `code` so adapters can map it to exit codes. */
export declare class LeasefenceError extends Error {
    readonly code: string;
    constructor(code: string, message: string);
}
/** A bad input, found before anything was written. The message says what to change. */
export declare class ValidationError extends LeasefenceError {
    constructor(message: string);
}
/** The gate has already seen a newer token: this holder must not publish. */
export declare class StaleFencingError extends LeasefenceError {
    readonly token: number;
    readonly newestToken: number;
    readonly newestOwner: string | undefined;
    constructor(resource: string, token: number, newestToken: number, newestOwner?: string);
}
/** The lease no longer shows this owner and token unexpired (taken over, released or expired). */
export declare class LeaseLostError extends LeasefenceError {
    readonly reason: string;
    constructor(resource: string, token: number, reason: string);
}
/** Another owner holds a live lease (on-busy: fail). */
export declare class LeaseBusyError extends LeasefenceError {
    constructor(message: string);
}
/** on-busy: wait gave up. */
export declare class WaitTimeoutError extends LeasefenceError {
    constructor(message: string);
}
/** Firestore did not give a definite answer (contention or network) within the retry budget. */
export declare class StoreUnavailableError extends LeasefenceError {
    readonly cause: unknown;
    constructor(message: string, cause?: unknown);
}
/** True for the refusals a publish must turn into exit code 75. */
export declare function isFencingRefusal(err: unknown): err is StaleFencingError | LeaseLostError;
