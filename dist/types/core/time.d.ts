import { Timestamp } from '@google-cloud/firestore';
/**
 * Time, in one place.
 *
 * Two clocks matter and they are never mixed:
 * - the **server clock** (a Firestore read's `readTime`) decides whether a lease is expired and when it
 *   will expire. No runner's wall clock is ever consulted for that, so a runner an hour off can neither
 *   steal a live lease nor keep a dead one.
 * - the **monotonic clock** of the holder measures its own deadline: ttl from the moment it *sent* the
 *   request that was confirmed. The server's expiry (readTime + ttl, readTime being later than the send)
 *   is never earlier than that deadline, so the holder always gives up first.
 */
export interface Clock {
    /** Monotonic milliseconds (performance.now()); only differences mean anything. */
    monotonic(): number;
    /** Wall-clock milliseconds; used for logs and summaries only, never for expiry. */
    wall(): number;
}
export declare const systemClock: Clock;
/** Where expiry is decided: a lease is expired when its expiresAt is at or before the server's now. */
export declare function isExpired(expiresAt: Timestamp | undefined | null, serverNow: Timestamp): boolean;
/** A lease is live while it is neither released nor expired at the server's now. */
export declare function isLive(lease: {
    expiresAt: Timestamp;
    releasedAt?: Timestamp | null;
} | undefined, serverNow: Timestamp): boolean;
/** The server-side expiry of a lease confirmed at serverNow. */
export declare function expiryAfter(serverNow: Timestamp, ttlMs: number): Timestamp;
/** Milliseconds left on a lease, by the server's clock (negative when expired). */
export declare function remainingMs(expiresAt: Timestamp, serverNow: Timestamp): number;
/** The holder's own deadline on its monotonic clock: ttl after the confirmed request was sent. */
export declare function holderDeadline(sentAtMonotonic: number, ttlMs: number): number;
export declare function sleep(ms: number, signal?: AbortSignal): Promise<void>;
/** `p`, or a rejection with `message` after `ms`: a call hung on the network must not hold up a stop. */
export declare function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T>;
/** ms ± fraction, so that many waiters do not poll in lock-step. */
export declare function jitter(ms: number, fraction?: number, random?: () => number): number;
