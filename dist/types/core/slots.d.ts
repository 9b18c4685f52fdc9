import { type BusyInfo } from './acquire';
import type { AcquireOptions, Lease, LeaseStore } from './lease-store';
import type { OnBusy } from './options';
import { type Clock } from './time';
/**
 * N-slot leases: one environment per parallel job. Slot i of `resource` is its own lease document
 * (`resource#slot-i`) with its own fencing counter. Everything derived from a slot (ports, schema) is a
 * pure function of its index, so a restarted job that gets the same slot gets the same values.
 */
export interface SlotLayout {
    portBase: number;
    portsPerSlot: number;
    schemaPrefix: string;
}
export declare const DEFAULT_SLOT_LAYOUT: SlotLayout;
export interface SlotValues {
    slot: number;
    port: number;
    schema: string;
}
export declare function validateSlots(slots: number | string): number;
export declare function validateLayout(layout: SlotLayout, slots: number): SlotLayout;
/** Ports, schema of slot `i`: deterministic from the index. */
export declare function slotValues(slot: number, layout?: SlotLayout): SlotValues;
/** `KEY=value` lines for an env file (values are digits and [a-z0-9_], nothing to quote). */
export declare function slotEnvLines(v: SlotValues, token: number): string;
export interface SlotPolicy extends AcquireOptions {
    onBusy: OnBusy;
    waitTimeoutMs?: number;
    pollMs?: number;
    clock?: Clock;
    signal?: AbortSignal;
    onWaiting?(busy: BusyInfo[], waitedMs: number): void;
    progressEveryMs?: number;
}
export type SlotResult = 
/** alreadyHeld: this owner held that slot live before (a restarted job got its own slot back). */
{
    acquired: true;
    slot: number;
    lease: Lease;
    waitedMs: number;
    alreadyHeld: boolean;
} | {
    acquired: false;
    busy: BusyInfo[];
    waitedMs: number;
};
/**
 * Leases any free slot among N. A slot this owner already holds comes first (a restarted job keeps its
 * slot), then free or expired slots by index. Waiting (no FIFO across slots) watches every slot document.
 */
export declare function acquireSlot(store: LeaseStore, resource: string, slots: number, owner: string, policy: SlotPolicy): Promise<SlotResult>;
