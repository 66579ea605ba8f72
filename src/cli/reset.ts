// Owns `billing-sandbox reset [--all]`: the account back to empty, or everything back to its start state.
import { Command, Option } from 'commander';
import { clientAction, withClientOptions } from './client.js';

export function resetCommand(): Command {
  return withClientOptions(new Command('reset'))
    .description('put the account back to empty (data, clock, subscriptions, journal, its scenarios); its keys stay')
    .addOption(new Option('--all', 'reset the whole sandbox instead: every partner and account back to the start state'))
    .action(clientAction(async ({ client, out }, flags: { all?: boolean }) => {
      const answer = await out.wait('Resetting', client.control<{ reset: string }>('POST', '/reset', { anonymous: Boolean(flags.all) }));
      if (out.json) return out.data(answer);
      out.line(answer.reset === 'all' ? 'Reset everything to the start state.' : `Reset the account of ${client.options.clientId} to empty.`);
    }));
}
