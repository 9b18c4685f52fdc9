/**
 * Port bands of environment slots. Each named base (dev=3000, api=4000, ...) gives slot i the port
 * `base + i × portsPerSlot`; the slot also owns the ports after it up to the next slot's (its band), for
 * whatever else its processes open. Pure functions of the slot index: the same slot always gets the same
 * ports, on every machine and after every restart.
 */
export interface PortBase {
    /** `dev`, `api`, `db-proxy`, ...: [a-z][a-z0-9-]* */
    name: string;
    base: number;
}
export declare const DEFAULT_PORT_BASES: readonly PortBase[];
export declare const DEFAULT_PORTS_PER_SLOT = 10;
/** The port `env ready` waits on: the one named `dev`, or else the first. */
export declare const DEV_PORT_NAME = "dev";
/** Parses `dev=3000,api=4000,db-proxy=5000` (order kept). */
export declare function parsePortBases(text: string): PortBase[];
export declare function formatPortBases(bases: readonly PortBase[]): string;
/** The environment variable a named port goes into: dev → PORT, api → API_PORT, db-proxy → DB_PROXY_PORT. */
export declare function portEnvName(name: string): string;
export declare function parsePortsPerSlot(value: string | number): number;
/**
 * Checks names, that every slot's ports exist (≤ 65535), and that no two named bands overlap for any of
 * the `slots` slots (dev=3000 and api=3050 with 10 slots of 10 ports would hand one port to two names).
 */
export declare function validatePortLayout(bases: readonly PortBase[], portsPerSlot: number, slots: number): void;
export interface SlotPorts {
    /** name → the slot's port of that name. */
    ports: Record<string, number>;
    /** Every port the slot owns: for each name, [port, port + portsPerSlot - 1]. */
    bands: {
        name: string;
        from: number;
        to: number;
    }[];
    /** The port `env ready` checks. */
    devPort: number;
    devName: string;
}
export declare function slotPorts(slot: number, bases: readonly PortBase[], portsPerSlot: number): SlotPorts;
/** All ports of a slot's bands, ascending. */
export declare function bandPorts(p: SlotPorts): number[];
export declare function formatBands(p: SlotPorts): string;
