import { type DocumentData, type DocumentReference, type Timestamp } from '@google-cloud/firestore';
import type { LeaseStore } from './lease-store';
/**
 * The FIFO wait queue of one resource: `leases/{id}/queue/{ticket}`, ordered by the server's commit time.
 * A ticket is live while its waiter keeps heartbeating it (heartbeatAt + ttl after the server's now);
 * a waiter that disappears is skipped one ttl later. The lease goes to the oldest live ticket: only the
 * head of the queue tries to acquire. With `supersede`, a newer waiter cancels the older waiting tickets.
 */
export interface TicketDoc {
    owner: string;
    createdAt: Timestamp;
    heartbeatAt: Timestamp;
    ttlMs: number;
    mode: 'fifo' | 'supersede';
    cancelled: boolean;
    cancelledBy?: string | null;
    holder?: Record<string, string>;
}
export interface QueueView {
    /** 0 = head of the queue; -1 when our ticket is gone or cancelled. */
    position: number;
    liveTickets: number;
    cancelled: boolean;
    cancelledBy?: string;
    serverNow: Timestamp;
}
export declare class QueueTicket {
    private readonly store;
    private readonly resource;
    readonly owner: string;
    private readonly ttlMs;
    readonly ref: DocumentReference;
    private timer?;
    private closed;
    private constructor();
    get id(): string;
    /** Takes a ticket and keeps it alive every ttl/3 until `leave`. */
    static join(store: LeaseStore, resource: string, owner: string, opts: {
        ttlMs: number;
        mode: 'fifo' | 'supersede';
        holder?: Record<string, string>;
    }): Promise<QueueTicket>;
    private keepAlive;
    /** Where this ticket stands, by the server's clock. */
    view(): Promise<QueueView>;
    /** supersede: cancel every older, still waiting ticket. Returns how many were cancelled. */
    cancelOlder(): Promise<number>;
    /** Calls `onChange` whenever the queue changes (a ticket joins, leaves or is cancelled). */
    watch(callback: () => void): () => void;
    leave(): Promise<void>;
}
export declare function isTicketLive(t: Pick<TicketDoc, 'heartbeatAt' | 'ttlMs'>, serverNowMs: number): boolean;
/** How many live tickets wait on the resource (used by a newcomer to decide whether to queue). */
export declare function liveTicketCount(store: LeaseStore, resource: string): Promise<number>;
/** Tickets neither cancelled nor abandoned, at the server's now. */
export declare function countLiveTickets(docs: {
    data(): DocumentData;
}[], serverNow: Timestamp): number;
