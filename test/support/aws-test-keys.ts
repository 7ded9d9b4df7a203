/**
 * Dummy AWS credentials for the SDK's default chain, in this test process only: the s3
 * adapter's tests talk to s3rver or a loopback server, never to AWS.
 */

/** Sets `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` to `value`; the function returned puts back what was there. */
export function setAwsTestKeys(value: string): () => void {
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  process.env.AWS_ACCESS_KEY_ID = value;
  process.env.AWS_SECRET_ACCESS_KEY = value;
  return () => {
    if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    else process.env.AWS_ACCESS_KEY_ID = saved.id;
    if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
    else process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
  };
}
