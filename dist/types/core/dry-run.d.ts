import type { LeaseStore } from './lease-store';
/** What an acquisition would do, from reads only (dry run). */
export interface AcquirePlan {
    resource: string;
    wouldAcquire: boolean;
    /** The token this acquisition would get (or the holder's, when busy). */
    token: number;
    holder?: string;
    remainingMs: number;
    message: string;
}
export declare function planAcquire(store: LeaseStore, resource: string, owner: string): Promise<AcquirePlan>;
/** What the gate would say, from reads only (dry run). */
export declare function planGate(store: LeaseStore, resource: string, token: number): Promise<{
    wouldPass: boolean;
    message: string;
}>;
