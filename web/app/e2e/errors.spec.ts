// The one mapping from a refusal to what a person reads (src/api.ts `humanError`), case by
// case with the server's own messages: a sentence, never the contract's code. No browser.
import { expect, test } from '@playwright/test';
import { ApiError, humanError } from '../src/api';

const CODES = ['UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_USER_INPUT', 'CONFLICT', 'WINDOW_CLOSED', 'RATE_LIMITED', 'QUERY_TOO_COMPLEX', 'UNAVAILABLE', 'INTERNAL'];

const CASES: [ApiError, string | undefined, string][] = [
  [new ApiError('wrong email or password', 'UNAUTHENTICATED'), undefined, 'That email and password do not match an account. Check both and try again.'],
  [new ApiError('sign in first', 'UNAUTHENTICATED'), undefined, 'Please log in first: your session may have ended.'],
  [new ApiError('max: must be greater than min', 'BAD_USER_INPUT', undefined, 'max'), 'Highest score', 'Highest score must be greater than min.'],
  [new ApiError('maxTeamSize: must be at least 1', 'BAD_USER_INPUT', undefined, 'maxTeamSize'), undefined, 'Max team size must be at least 1.'],
  [new ApiError('tags: at most 10 tags are allowed', 'BAD_USER_INPUT', undefined, 'tags'), 'Tags', 'At most 10 tags are allowed.'],
  [new ApiError('scores: craft is not scored; a submitted review scores every criterion', 'BAD_USER_INPUT', undefined, 'scores'), undefined, 'Craft is not scored; a submitted review scores every criterion.'],
  [new ApiError('project not found', 'NOT_FOUND'), undefined, 'There is no such project: it may have been removed, or the link is wrong.'],
  [new ApiError('the judging window has closed', 'WINDOW_CLOSED'), undefined, 'The judging window has closed.'],
  [new ApiError('an event with this slug exists', 'CONFLICT'), undefined, 'An event with this slug exists.'],
  [new ApiError('only site administrators create events', 'FORBIDDEN'), undefined, 'Only site administrators create events.'],
  [new ApiError('too many attempts; retry in 30 seconds', 'RATE_LIMITED', 30), undefined, 'Too many attempts. Try again in 30 seconds.'],
  [new ApiError('the database cannot serve this request right now; retry in 5 seconds (request id r-1)', 'UNAVAILABLE', 5), undefined, "Verdict's database is not answering right now; nothing was saved. Try again in 5 seconds."],
  [new ApiError('internal error (request id abc-123)', 'INTERNAL'), undefined, "Something went wrong on Verdict's side. If it happens again, tell the organizers request id abc-123."],
  [new ApiError('query is too complex', 'QUERY_TOO_COMPLEX'), undefined, 'That page asked the server for too much at once. Reload it, or ask the organizers.'],
  [new ApiError('Could not reach Verdict. Check your connection and try again.', 'NETWORK'), undefined, 'Could not reach Verdict. Check your connection and try again.'],
];

test('every refusal reads as a sentence, with the form’s own label for the field it names, and never shows its code', () => {
  for (const [error, label, said] of CASES) {
    const text = humanError(error, label);
    expect(text, `${error.code} ${error.message}`).toBe(said);
    for (const code of CODES) expect(text).not.toContain(code);
  }
});
