// Files of runs and examples: every byte is fetched with the bearer key (api.ts `request`) and
// handed to the page as a blob: URL — a link that carries the key, or a download token, never
// appears in the page. Text is shown as text; images through an <img> on the blob: URL
// (the console's CSP allows img-src blob:).

import { useEffect, useState } from 'preact/hooks';
import { request } from '../api.js';
import { Failure, Loading } from './ui.js';

/** The longest text shown in a preview; the download has all of it. */
const TEXT_PREVIEW_BYTES = 256 * 1024;

export async function fetchBlob(url: string, type?: string | null): Promise<Blob> {
  const response = await request(url);
  const bytes = await response.arrayBuffer();
  // The API sends files as application/octet-stream; the stored type comes from the listing.
  return new Blob([bytes], { type: type ?? response.headers.get('x-file-content-type') ?? '' });
}

/** Fetches with the key and saves under `filename` through a short-lived blob: URL. */
export async function download(url: string, filename: string, type?: string | null): Promise<void> {
  saveBlob(await fetchBlob(url, type), filename);
}

export function saveBlob(blob: Blob, filename: string): void {
  const objectUrl = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = objectUrl;
  a.download = filename.split('/').pop() || 'download';
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
  // The click has started the download; the URL is not needed after this turn.
  setTimeout(() => URL.revokeObjectURL(objectUrl), 0);
}

export type PreviewKind = 'image' | 'text' | 'none';

const TEXT_TYPES = /^(text\/|application\/(json|xml|yaml|x-yaml|x-ndjson|csv|javascript)|[^;]*\+(json|xml))/i;
const TEXT_NAMES =
  /\.(txt|md|markdown|json|ndjson|jsonl|csv|tsv|ya?ml|xml|html?|log|js|ts|py|sql|ini|toml)$/i;
const IMAGE_TYPES = /^image\/(png|jpe?g|gif|webp|bmp|avif|x-icon)$/i;
const IMAGE_NAMES = /\.(png|jpe?g|gif|webp|bmp|avif|ico)$/i;

/** What a preview can show. SVG is not previewed as an image (a document, not a picture). */
export function previewKind(name: string, type?: string | null): PreviewKind {
  if ((type && IMAGE_TYPES.test(type)) || (!type && IMAGE_NAMES.test(name))) return 'image';
  if ((type && TEXT_TYPES.test(type)) || TEXT_NAMES.test(name)) return 'text';
  return 'none';
}

export function imageType(name: string, type?: string | null): string {
  if (type && IMAGE_TYPES.test(type)) return type;
  const ext = /\.([a-z]+)$/i.exec(name)?.[1]?.toLowerCase() ?? 'png';
  return `image/${ext === 'jpg' ? 'jpeg' : ext === 'ico' ? 'x-icon' : ext}`;
}

export function FilePreview({ url, name, type }: { url: string; name: string; type?: string | null }) {
  const kind = previewKind(name, type);
  const [text, setText] = useState<string | null>(null);
  const [imageUrl, setImageUrl] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    if (kind === 'none') return undefined;
    let objectUrl: string | null = null;
    let live = true;
    setText(null);
    setImageUrl(null);
    setError(undefined);
    fetchBlob(url, kind === 'image' ? imageType(name, type) : 'text/plain').then(
      async (blob) => {
        if (!live) return;
        if (kind === 'image') {
          objectUrl = URL.createObjectURL(blob);
          setImageUrl(objectUrl);
        } else {
          const cut = blob.size > TEXT_PREVIEW_BYTES;
          const body = await blob.slice(0, TEXT_PREVIEW_BYTES).text();
          if (live) setText(cut ? `${body}\n… (${blob.size} bytes; download for the rest)` : body);
        }
      },
      (err: unknown) => live && setError(err),
    );
    return () => {
      live = false;
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [url, name, type, kind]);
  if (kind === 'none') return <p class="sa-muted">No preview for this type; download it.</p>;
  if (error !== undefined) return <Failure error={error} title="Could not load the preview" />;
  if (kind === 'image')
    return imageUrl ? <img class="sa-image" src={imageUrl} alt={`Preview of ${name}`} /> : <Loading />;
  return text === null ? (
    <Loading />
  ) : (
    <pre class="sa-pre" aria-label={`Text of ${name}`}>
      {text}
    </pre>
  );
}

/**
 * A list of stored files with download, rename (an inline form) and delete; `rename` and
 * `remove` call the API and the caller reloads the list.
 */
export function FileRows({
  names,
  urlOf,
  rename,
  remove,
  renameDefault,
  act,
  testId,
}: {
  names: string[];
  urlOf: (name: string) => string;
  rename: (name: string, to: string) => Promise<void>;
  remove: (name: string) => Promise<void>;
  /** The name the rename field starts with (default: the name itself). */
  renameDefault?: (name: string) => string;
  /** Runs an action with the caller's busy state and error box, then reloads. */
  act: (fn: () => Promise<void>) => void;
  testId?: string;
}) {
  const [renaming, setRenaming] = useState<{ from: string; to: string } | null>(null);
  return (
    <ul class="sa-files" data-testid={testId}>
      {names.map((name) => (
        <li key={name}>
          {renaming?.from === name ? (
            <form
              class="sa-row"
              onSubmit={(e) => {
                e.preventDefault();
                act(async () => {
                  await rename(name, renaming.to);
                  setRenaming(null);
                });
              }}
            >
              <label class="sa-field">
                <span class="sa-field-label">New name for {name}</span>
                <input
                  value={renaming.to}
                  onInput={(e) => setRenaming({ from: name, to: e.currentTarget.value })}
                />
              </label>
              <button type="submit">Rename</button>
              <button type="button" onClick={() => setRenaming(null)}>
                Cancel
              </button>
            </form>
          ) : (
            <>
              <code>{name}</code>
              <button type="button" onClick={() => act(() => download(urlOf(name), name))}>
                Download<span class="sa-sr"> {name}</span>
              </button>
              <button
                type="button"
                onClick={() => setRenaming({ from: name, to: renameDefault?.(name) ?? name })}
              >
                Rename<span class="sa-sr"> {name}</span>
              </button>
              <button type="button" onClick={() => act(() => remove(name))}>
                Delete<span class="sa-sr"> {name}</span>
              </button>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}
