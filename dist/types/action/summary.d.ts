import type { LocalEvent, LostMarker } from '../core/local-state';
/** Everything the post step knows at the end of the job, for the job summary. */
export interface SummaryData {
    resource: string;
    owner: string;
    token: number;
    runUrl?: string;
    /** Server time of the acquisition. */
    acquiredAt?: Date;
    waitedMs?: number;
    heartbeat?: {
        renewals: number;
        failures: number;
        lost: boolean;
        lostReason?: string;
    };
    /** The lost marker the heartbeat left, if any. */
    lost?: LostMarker;
    events: LocalEvent[];
    /** With slots: the slot index. */
    slot?: number;
    /** How the lease was taken from its previous owner. */
    takeover?: string;
    release: {
        released: true;
        at: Date;
        wasExpired: boolean;
    } | {
        released: false;
        reason: string;
        at?: Date;
        error?: boolean;
    };
}
/** Escapes a value for a markdown table cell. */
export declare function cell(text: string): string;
/** Inline code that survives backticks in the value. */
export declare function code(text: string): string;
/** One line for the log and the heading: what became of the lease. */
export declare function outcomeOf(d: SummaryData): {
    ok: boolean;
    text: string;
};
/** The job summary as markdown. Pure: the post step writes it with core.summary. */
export declare function renderSummary(d: SummaryData): string;
/** The note for a job whose main step did not acquire the lease. */
export declare function renderSkippedNote(resource: string | undefined, holder: string | undefined): string;
