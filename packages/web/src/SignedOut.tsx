/**
 * What a tab shows without its half of the session (api/tab-session.ts): it was opened
 * without a login link while no other signed-in tab was open, or the browser signed out.
 */
export function SignedOut({ reason }: { reason: 'no-proof' | 'signed-out' }) {
  return (
    <main className="signed-out" data-testid="signed-out">
      <h1>{reason === 'signed-out' ? 'Signed out' : 'This tab is not signed in'}</h1>
      <p>
        {reason === 'signed-out'
          ? 'This browser is signed out of sendbox.'
          : 'A tab signs in with a login link, or from another signed-in tab of this sendbox that is still open.'}
      </p>
      <p>
        Run the login command sendbox printed when it started (<code>sendbox login</code>, or{' '}
        <code>node …/bin/sendbox.mjs login</code> where sendbox is not on the PATH; with the same{' '}
        <code>--data-dir</code>) and open the link it prints.
      </p>
    </main>
  );
}
