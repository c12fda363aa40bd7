/**
 * A route's steps are typed (gateway/pipeline.ts, Route): a step that reads what an earlier step
 * sets (the key, a checked query, a cursor's filters) is accepted only after that step. The
 * `@ts-expect-error` lines are the test: `tsc -p tsconfig.test.json` fails if one of them compiles.
 */
import { Route, type Keyed, type RequestContext, type Step, type WithListQuery } from '../../gateway/pipeline';

const seen: string[] = [];
const setsKey: Step<object, Keyed> = (ctx) => void seen.push(`key set for ${ctx.requestId}`);
const needsKey: Step<Keyed> = (ctx) => void seen.push(`key read: ${ctx.key.id}`);
const needsQuery: Step<Keyed & WithListQuery> = (ctx) => void seen.push(`query read: ${ctx.listQuery.country}`);

it('a step is accepted only after the steps that set what it needs', () => {
  // @ts-expect-error the key is not set before this step
  Route.start().then(needsKey);
  // @ts-expect-error the key is set, the checked query is not
  Route.start().then(setsKey).then(needsQuery);
  expect(Route.start().then(setsKey).then(needsKey).steps).toHaveLength(2);
});

it('a route runs its steps in order, each once', async () => {
  seen.length = 0;
  const ctx = { requestId: 'r1', key: { id: 'k1' } } as unknown as RequestContext;
  await Route.start().then(setsKey).then(needsKey).run(ctx);
  expect(seen).toEqual(['key set for r1', 'key read: k1']);
});
