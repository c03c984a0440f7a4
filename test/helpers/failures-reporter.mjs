// A second reporter of the halves' `node --test` runs (test/run.mjs): one JSON line per failed
// test, with its file and the error, which the runner prints again after both halves, so the end
// of a long log (all a CI page keeps) names what failed. Suites that failed only because a test
// inside them did are left out: the test itself is listed.
const text = (error) => {
  const cause = error?.cause ?? error;
  const message = cause?.stack ?? cause?.message ?? String(cause);
  return message.split('\n').slice(0, 8).join('\n');
};

export default async function* failures(source) {
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    if (details?.error?.failureType === 'subtestsFailed') continue;
    yield `${JSON.stringify({ name, file, error: text(details?.error) })}\n`;
  }
}
