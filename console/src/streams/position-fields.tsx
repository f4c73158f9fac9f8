// Where a read or a reset starts: an offset or a local date and time, the inputs and their check,
// shared by the record browser (topic.tsx) and the group offset reset (group-admin.tsx).

import { useState } from 'preact/hooks';
import { TextField } from '../ui/forms.js';

export type Position = { offset: number } | { timestamp: number };

export interface PositionInput {
  offset: string;
  time: string;
  error: string | undefined;
  setOffset: (value: string) => void;
  setTime: (value: string) => void;
  /** The typed offset or time; undefined (and the error shown) when it is not valid. */
  read: (mode: 'offset' | 'time') => Position | undefined;
  clearError: () => void;
}

export function usePositionInput(): PositionInput {
  const [offset, setOffset] = useState('0');
  const [time, setTime] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const read = (mode: 'offset' | 'time'): Position | undefined => {
    if (mode === 'offset') {
      if (!/^\d+$/.test(offset)) return void setError('The offset is a whole number.');
      return { offset: Number(offset) };
    }
    const ms = Date.parse(time);
    if (Number.isNaN(ms)) return void setError('Pick a date and time.');
    return { timestamp: ms };
  };
  return { offset, time, error, setOffset, setTime, read, clearError: () => setError(undefined) };
}

/** The offset field when `mode` is offset, the time field when it is time, nothing otherwise. */
export function PositionFields(props: {
  mode: string;
  input: PositionInput;
  name: string;
  timeLabel: string;
}) {
  const { mode, input, name } = props;
  if (mode === 'offset')
    return (
      <TextField
        label="Offset"
        name={`${name}offset`}
        type="number"
        min={0}
        value={input.offset}
        onValue={input.setOffset}
        error={input.error}
      />
    );
  if (mode === 'time')
    return (
      <TextField
        label={props.timeLabel}
        name={`${name}time`}
        type="datetime-local"
        value={input.time}
        onValue={input.setTime}
        error={input.error}
      />
    );
  return null;
}
