import { Command } from 'commander';
export declare function envCommand(): Command;
