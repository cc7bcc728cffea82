/** The `profile` part of `update_state`: the agent changes its own name, description or instructions. */
import { StateError, type StateHandler } from '../tools/update-state/index.ts';
import type { ProfileCommand } from '../tools/update-state/schema.ts';
import type { ProfileEditor } from './profile-editor.ts';

export function profileHandler(editor: ProfileEditor): StateHandler<ProfileCommand> {
  return {
    async apply(input) {
      try {
        const { profile, changed } = await editor.update(input, 'agent');
        return {
          text:
            changed.length === 0
              ? 'Your profile already says that; nothing changed.'
              : `Changed your ${changed.join(', ')}; the user sees a notice. You are now ${JSON.stringify(profile.name)}.`,
          target: profile.name,
        };
      } catch (error) {
        throw new StateError(`Your profile could not be changed: ${(error as Error).message}`);
      }
    },
  };
}
