import { Command } from 'commander';
import { type LeaseRow } from '../core/operations';
export declare function statusCommand(): Command;
export declare function formatStatusTable(rows: LeaseRow[], now?: Date): string;
