// Owns the command line's shape: the root command (which serves, as `billing-sandbox --port 4010`
// always did), one subcommand group per file of src/cli/, usage errors as exit code 2, and printing
// what a command threw with its exit code (see errors.ts).
import { Command, CommanderError } from 'commander';
import { VERSION } from '../config.js';
import { didYouMean } from '../suggest.js';
import { clockCommand } from './clock.js';
import { CliError, EXIT, usageError } from './errors.js';
import { listenCommand } from './listen.js';
import { Output } from './output.js';
import { requestsCommand } from './requests.js';
import { resetCommand } from './reset.js';
import { scenarioCommand } from './scenario.js';
import { snapshotCommand } from './snapshot.js';
import { parityCommand } from '../parity/command.js';
import { diffCommand } from '../recording/diff-command.js';
import { recordCommand } from '../recording/record-command.js';
import { environmentConfig, serve, serveCommand, withServeOptions, type ServeFlags, type ServeHooks } from './serve.js';
import { triggerCommand } from './trigger.js';

/**
 * Every subcommand, one line each: a function that builds a commander Command.
 * Add a command here.
 */
export const COMMANDS: Array<(hooks: ServeHooks) => Command> = [
  serveCommand,
  clockCommand,
  triggerCommand,
  listenCommand,
  requestsCommand,
  resetCommand,
  scenarioCommand,
  snapshotCommand,
  () => parityCommand(),
  () => recordCommand(),
  () => diffCommand(),
];

/** Settings every command needs, also for commands built elsewhere and added with addCommand. */
function applySettings(command: Command): void {
  command.exitOverride().showHelpAfterError('(add --help for usage)');
  for (const sub of command.commands) applySettings(sub);
}

export function buildProgram(hooks: ServeHooks = {}): Command {
  const { env, problem } = environmentConfig();
  const program = withServeOptions(new Command('billing-sandbox'), env)
    .description('A stateful, high-fidelity sandbox of the partner billing, payments and payables API.\nWith no command it serves; the commands below talk to a running sandbox.')
    .version(VERSION, '-v, --version')
    // Options after a command name belong to that command (`clock --admin-token T` is the client's token).
    .enablePositionalOptions()
    .allowExcessArguments(true)
    .action(async function (this: Command) {
      const [unknown] = this.args;
      if (unknown !== undefined) {
        throw usageError(`unknown command '${unknown}'${didYouMean(unknown, this.commands.map((c) => c.name()))} (see billing-sandbox --help)`);
      }
      await serve(this.opts<ServeFlags>(), env, problem, hooks);
    });
  for (const make of COMMANDS) program.addCommand(make(hooks));
  applySettings(program);
  return program;
}

/** Run the command line; resolves while a server runs, and exits the process for every other outcome. */
export async function run(argv: string[], hooks: ServeHooks = {}): Promise<void> {
  const program = buildProgram(hooks);
  const json = argv.includes('--json');
  let code: number = EXIT.ok;
  try {
    await program.parseAsync(argv);
    // A server keeps running (it exits on a signal); every other command is done.
    if (program.args.length === 0 || program.args[0] === 'serve') return;
  } catch (error) {
    const out = new Output(json);
    if (error instanceof CommanderError) {
      // Commander printed the message (or the help / version) already.
      code = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    } else if (error instanceof CliError) {
      if (json) process.stderr.write(`${JSON.stringify({ error: { message: error.message, exit_code: error.exitCode, ...error.details } })}\n`);
      else out.error(error.message);
      code = error.exitCode;
    } else {
      out.error(`unexpected: ${(error as Error).stack ?? String(error)}`);
      code = EXIT.refused;
    }
    await out.flushed();
    process.exit(code);
  }
  await new Output(json).flushed();
  // Not waiting for idle keep-alive connections to time out. A command may have set its own exit
  // code (parity: 1 when a case failed).
  process.exit(process.exitCode ?? code);
}
