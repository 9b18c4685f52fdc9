import { Command } from 'commander';
export declare function defaultOwner(): string;
export declare function runCommand(): Command;
