// A track's row actions on the Tracks page: rename it in place, or delete it while nothing
// uses it (the server refuses otherwise, naming what uses it).
import { useState } from 'preact/hooks';
import { useMutation } from '../../api';
import { graphql } from '../../graphql';
import { Confirm, ErrorNote, Field } from '../../ui';

const RenameTrack = graphql(`
  mutation RenameTrack($id: ID!, $name: String!) {
    renameTrack(id: $id, name: $name) { id name }
  }
`);

const DeleteTrack = graphql(`
  mutation DeleteTrack($id: ID!) {
    deleteTrack(id: $id)
  }
`);

export function TrackActions({ track, onChanged }: { track: { id: string; name: string }; onChanged: () => Promise<void> }) {
  const [name, setName] = useState(track.name);
  const rename = useMutation(RenameTrack);
  const remove = useMutation(DeleteTrack);
  return (
    <div class="track-actions">
      <form
        class="inline"
        onSubmit={async (e) => {
          e.preventDefault();
          if (await rename.run({ id: track.id, name: name.trim() })) await onChanged();
        }}
      >
        <Field label={`New name of ${track.name}`} required maxLength={200} value={name} onValue={setName} />
        <button type="submit" class="secondary" disabled={rename.loading || name.trim() === track.name || !name.trim()}>
          Rename
        </button>
      </form>
      <Confirm
        action="Delete"
        yes="Confirm delete"
        busy={remove.loading}
        onAsk={remove.reset}
        onYes={async () => {
          if (await remove.run({ id: track.id })) await onChanged();
        }}
      />
      <ErrorNote error={rename.error ?? remove.error} />
    </div>
  );
}
