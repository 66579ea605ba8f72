// The reference of `npm run bench`: express 5's hello-world, as its documentation writes it.
import express from 'express';

const app = express();
app.get('/', (_req, res) => {
  res.send('Hello World!');
});
const server = app.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
