/**
 * What went wrong with the user's last action, in words: read out by screen readers as it appears
 * (`role="alert"`), and nothing at all when there is no message.
 */
export function ErrorAlert({ message, testId }: { message: string | null | undefined; testId?: string }) {
  if (!message) return null;
  return (
    <p className="error" role="alert" data-testid={testId}>
      {message}
    </p>
  );
}
