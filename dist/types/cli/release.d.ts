import { Command } from 'commander';
export declare function operatorActor(explicit?: string): string;
export declare function releaseCommand(): Command;
export declare function reapCommand(): Command;
