// An s3rver (the S3 server the s3 adapter's tests use) in a process of its own, so that a test
// can SIGSTOP it: a stalled server that accepts connections and never answers.
// argv: its data folder, the bucket. Prints `PORT <n>` once it listens.
const S3rver = require('s3rver');

const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory: process.argv[2],
  configureBuckets: [{ name: process.argv[3] }],
});
server.run().then(({ port }) => process.stdout.write(`PORT ${port}\n`));
