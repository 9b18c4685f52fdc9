/**
 * A holder's local state directory (LEASEFENCE_STATE_DIR): how the heartbeat tells later commands of
 * the same job, without a round trip, that the lease is lost, and where gate passes are counted.
 *   lost          written once by the heartbeat when the lease is lost (JSON: reason, at)
 *   events.jsonl  one line per gate pass / refusal, read by the action's post step
 */
export declare const STATE_DIR_ENV = "LEASEFENCE_STATE_DIR";
export interface LostMarker {
    reason: string;
    at: string;
    token: number;
}
export declare function writeLostMarker(dir: string, marker: LostMarker): void;
export declare function readLostMarker(dir: string | undefined): LostMarker | undefined;
export interface LocalEvent {
    type: 'gate_passed' | 'gate_refused';
    token: number;
    at: string;
    detail?: string;
}
export declare function appendLocalEvent(dir: string | undefined, e: LocalEvent): void;
export declare function readLocalEvents(dir: string | undefined): LocalEvent[];
