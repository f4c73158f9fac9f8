// A consumer group's administration, for keys with streams:write: reset its offsets (earliest,
// latest, an offset or a time; the confirmation shows the new offsets from a dry run) and
// delete it (confirmed by typing its name). Both need a stopped group, as the server does
// (docs/streams.md, "Reset or delete a stopped consumer group"): while it has members the
// buttons are disabled and say why.

import { useState } from 'preact/hooks';
import { navigate, href } from '../shell/router.js';
import { useScope } from '../shell/scopes-context.js';
import { ConfirmDialog } from '../ui/confirm-dialog.js';
import { ErrorBox } from '../ui/error-box.js';
import { SelectField, TextField } from '../ui/forms.js';
import { PositionFields, usePositionInput } from './position-fields.js';
import { useAction } from '../ui/hooks.js';
import { Table } from '../ui/table.js';
import { deleteGroup, resetGroupOffsets, type ResetAnswer, type ResetTo } from './api.js';

type Mode = ResetTo['to'];
type Row = ResetAnswer['offsets'][number];

const MODES: { value: Mode; label: string }[] = [
  { value: 'earliest', label: 'the earliest offset (re-read everything kept)' },
  { value: 'latest', label: 'the latest offset (skip everything produced so far)' },
  { value: 'offset', label: 'an offset (clamped to each partition)' },
  { value: 'time', label: 'a time (the first record at or after it)' },
];

export function GroupAdmin(props: { group: string; members: number; onChanged: () => void }) {
  const allowed = useScope('streams:write');
  if (!allowed) return null;
  const busyReason =
    props.members > 0
      ? `The group has ${props.members} live member${props.members === 1 ? '' : 's'}. Stop ${props.members === 1 ? 'it' : 'them'} (delete the consumer instances, or let them expire) to reset offsets or delete the group.`
      : undefined;
  return (
    <section aria-labelledby="st-group-admin" class="group-admin">
      <h2 id="st-group-admin">Administration</h2>
      {busyReason ? (
        <p id="st-group-admin-why" class="muted" data-testid="group-admin-why">
          {busyReason}
        </p>
      ) : null}
      <ResetOffsets {...props} disabledBecause={busyReason} />
      <DeleteGroup {...props} disabledBecause={busyReason} />
    </section>
  );
}

function ResetOffsets(props: { group: string; disabledBecause: string | undefined; onChanged: () => void }) {
  const [mode, setMode] = useState<Mode>('earliest');
  const position = usePositionInput();
  const [open, setOpen] = useState(false);
  const preview = useAction<ResetAnswer>();
  const apply = useAction<ResetAnswer>();
  const [target, setTarget] = useState<ResetTo | undefined>(undefined);

  const choose = (): ResetTo | undefined => {
    if (mode !== 'offset' && mode !== 'time') return { to: mode };
    const at = position.read(mode);
    if (!at) return undefined;
    return 'offset' in at ? { to: 'offset', offset: at.offset } : { to: 'time', timestamp: at.timestamp };
  };
  const start = async () => {
    const chosen = choose();
    if (!chosen) return;
    position.clearError();
    setTarget(chosen);
    setOpen(true);
    await preview.run(() => resetGroupOffsets(props.group, chosen, true));
  };
  const disabled = props.disabledBecause !== undefined;
  return (
    <>
      <form
        class="form"
        aria-label="Reset offsets"
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        <h3>Reset offsets</h3>
        <div class="form-row">
          <SelectField
            label="Reset to"
            name="reset-to"
            value={mode}
            onValue={(v) => setMode(v as Mode)}
            options={MODES}
          />
          <PositionFields mode={mode} input={position} name="reset-" timeLabel="Time (local)" />
        </div>
        <div class="form-actions">
          <button
            type="submit"
            disabled={disabled}
            aria-describedby={disabled ? 'st-group-admin-why' : undefined}
          >
            Reset offsets…
          </button>
        </div>
      </form>
      {apply.result && !open ? (
        <p role="status" data-testid="reset-done">
          Offsets reset on {apply.result.offsets.length} partition
          {apply.result.offsets.length === 1 ? '' : 's'}.
        </p>
      ) : null}
      <ConfirmDialog
        open={open}
        title={`Reset the offsets of ${props.group}?`}
        confirmLabel="Reset offsets"
        confirmDisabled={!preview.result}
        busy={apply.busy}
        onCancel={() => setOpen(false)}
        onConfirm={async () => {
          if (!target) return;
          await apply.run(async () => {
            const answer = await resetGroupOffsets(props.group, target, false);
            setOpen(false);
            props.onChanged();
            return answer;
          });
        }}
      >
        <p>The group's next offset to read becomes, per partition:</p>
        {preview.busy ? <p role="status">Computing the new offsets…</p> : null}
        {preview.failure ? (
          <ErrorBox error={preview.failure} context="Computing the new offsets" service="streams" />
        ) : null}
        {apply.failure ? (
          <ErrorBox error={apply.failure} context="Resetting offsets" service="streams" />
        ) : null}
        {preview.result ? (
          <Table<Row>
            caption="New offsets"
            rowKey={(r) => `${r.topic}/${r.partition}`}
            rows={preview.result.offsets}
            empty="The group has no partitions to reset."
            columns={[
              { key: 'topic', label: 'Topic' },
              { key: 'partition', label: 'Partition', numeric: true },
              {
                key: 'previous_offset',
                label: 'Committed now',
                numeric: true,
                render: (r) => (r.previous_offset === null ? '—' : String(r.previous_offset)),
              },
              { key: 'offset', label: 'After the reset', numeric: true },
            ]}
          />
        ) : null}
      </ConfirmDialog>
    </>
  );
}

function DeleteGroup(props: { group: string; disabledBecause: string | undefined }) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const action = useAction<void>();
  const disabled = props.disabledBecause !== undefined;
  return (
    <div class="form">
      <h3>Delete the group</h3>
      <p class="muted">
        Forgets every offset the group committed. A consumer joining the name later starts anew.
      </p>
      <div class="form-actions">
        <button
          type="button"
          class="danger"
          disabled={disabled}
          aria-describedby={disabled ? 'st-group-admin-why' : undefined}
          onClick={() => {
            setTyped('');
            setOpen(true);
          }}
        >
          Delete group…
        </button>
      </div>
      <ConfirmDialog
        open={open}
        title={`Delete the group ${props.group}?`}
        confirmLabel="Delete group"
        confirmDisabled={typed !== props.group}
        busy={action.busy}
        onCancel={() => setOpen(false)}
        onConfirm={async () => {
          await action.run(async () => {
            await deleteGroup(props.group);
            navigate(href('streams', '/groups'));
          });
        }}
      >
        <p>
          Its committed offsets are deleted for good. Type <code>{props.group}</code> to confirm.
        </p>
        <TextField
          label="Group name"
          name="confirm-group"
          value={typed}
          onValue={setTyped}
          autocomplete="off"
        />
        {action.failure ? (
          <ErrorBox error={action.failure} context="Deleting the group" service="streams" />
        ) : null}
      </ConfirmDialog>
    </div>
  );
}
