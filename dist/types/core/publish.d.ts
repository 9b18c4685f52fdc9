import { LeaseLostError, type StaleFencingError } from './errors';
import type { GatePass, LeaseStore } from './lease-store';
/** Exit code of a refused gate or a lost lease (EX_TEMPFAIL): the side effect did not run. */
export declare const EXIT_FENCED = 75;
export interface HolderIdentity {
    resource: string;
    owner: string;
    token: number;
    /** LEASEFENCE_STATE_DIR, where the heartbeat leaves its lost marker. */
    stateDir?: string;
}
export type GateOutcome = {
    passed: true;
    pass: GatePass;
} | {
    passed: false;
    error: StaleFencingError | LeaseLostError;
    fromMarker: boolean;
};
/**
 * The check right before a side effect. Refuses at once, without a round trip, when the heartbeat has
 * left its lost marker; otherwise passes the Firestore gate. Infrastructure errors are thrown (the side
 * effect must not run then either, but it is not a fencing refusal).
 */
export declare function checkGate(store: Pick<LeaseStore, 'passGate'>, who: HolderIdentity): Promise<GateOutcome>;
