// Owns the webhook operations (subscriptions, history, resume) and their control-plane companions
// (delivery attempts, firing an event), and installs the delivery queue as the `webhooks` service.
import type { Feature } from '../feature.js';
import { created, ok, type Handler } from '../http/context.js';
import { pageParams } from '../http/pagination.js';
import { ApiError, Errors } from '../errors.js';
import { fireEvent, loadEventFactories } from './fire.js';
import { deliveryBody, listAttempts, listHistory } from './history.js';
import { WEBHOOKS_SERVICE, WebhookQueue, webhookQueue } from './queue.js';
import { HistoryBudget } from './history-budget.js';
import { createSubscription, deactivateSubscription, subscriptions, subscriptionView, type Subscription } from './subscriptions.js';

const listWebhooks: Handler<'listWebhooks'> = ({ account, query }) => {
  // A CLI forwarder's subscriptions are the sandbox's own, not the partner's: never listed.
  const filter = (s: Subscription) => !s.forwarder && (query.is_active === undefined || s.is_active === query.is_active);
  const page = subscriptions(account).page({
    ...pageParams(query),
    filter,
    where: query.topic ? { field: 'topic', value: query.topic } : undefined,
  });
  return ok({ ...page, data: page.data.map(subscriptionView) });
};

const deleteWebhook: Handler<'deleteWebhook'> = ({ deps, account, params }) => {
  if (subscriptions(account).get(params.subscription_id)?.forwarder) throw new ApiError(Errors.notFound, { message: `No webhook subscription with id ${params.subscription_id}.` });
  const sub = deactivateSubscription(account, params.subscription_id);
  webhookQueue(deps).dropSubscription(account, sub);
  return ok(subscriptionView(sub));
};

export const webhooksFeature: Feature = {
  name: 'webhooks',
  handlers: {
    listWebhooks,
    createWebhook: ({ deps, account, body }) => created(subscriptionView(createSubscription(deps, account, body))),
    deleteWebhook,
    listWebhookEvents: ({ deps, account, query }) => {
      // History past its retention goes before it is read, also when no event was recorded since the clock moved.
      webhookQueue(deps).prune(account);
      return ok(listHistory(account, query));
    },
    retryWebhooks: ({ deps, account }) => ok({ success: true, resumed: webhookQueue(deps).resume(account) }),
  },
  control: {
    sandboxListDeliveries: ({ deps, account, query }) => {
      // A read: the history's age limit is applied first when the data file takes writes (reads go on without it).
      if (!deps.store.degraded) webhookQueue(deps).prune(account);
      return ok({ data: listAttempts(account, query) });
    },
    // Faker loads on the first fired event; the firing is then one unit of work of its own (after
    // the await): what it made and the event, or (refused) nothing.
    sandboxFireEvent: async ({ deps, account, body }) => {
      await loadEventFactories();
      return account.transaction(() => {
        const { event, made } = fireEvent(deps, account, body.topic, body.entity_id);
        // In the unit of work that queued the event's deliveries: none of them has been sent yet.
        if (body.duplicate !== undefined && !webhookQueue(deps).duplicateEvent(account, event, body.duplicate)) {
          throw new ApiError(Errors.unprocessable, {
            message: `No active subscription of ${body.topic} would receive this event, so there is nothing to duplicate; subscribe a receiver first (POST /webhooks). Nothing was fired.`,
            validation_errors: { duplicate: `needs an active subscription of ${body.topic}` },
          });
        }
        return created({ ...deliveryBody(event), made });
      });
    },
  },
  install(deps) {
    const queue = new WebhookQueue(deps);
    deps.services.set(WEBHOOKS_SERVICE, queue);
    queue.install();
    // After the queue: its listener makes an event's deliveries and applies the retention first.
    new HistoryBudget(deps).install();
    // The clock moved on: history past its age limit goes now, in a unit of work of its own, so that a
    // read after an advance finds nothing to drop (reads still apply it: real time ages history too).
    deps.activity.on('clock', (account) => {
      if (deps.store.degraded || account.retired) return;
      try {
        account.transaction(() => queue.prune(account));
      } catch (error) {
        deps.log.error({ err: error, account: account.id }, 'webhook history retention after a clock advance failed');
      }
    });
  },
};
