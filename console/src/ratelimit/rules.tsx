// The loaded configuration per domain, as the tree the rules form: each descriptor key/value
// with its limit, and the nested descriptors below it.

import { ErrorBox, Notice } from '../ui/error-box.js';
import { useLoad } from '../ui/hooks.js';
import { loadConfig, type DescriptorView, type RuleView } from './api.js';

export function ruleText(rule: RuleView | null): string {
  if (!rule) return 'no limit of its own';
  if (rule.unlimited) return 'unlimited';
  return `${rule.requestsPerUnit} per ${(rule.unit ?? '').toLowerCase()}`;
}

function RuleBadges({ rule }: { rule: RuleView | null }) {
  if (!rule) return <span class="muted">{ruleText(rule)}</span>;
  return (
    <>
      <span class={rule.unlimited ? 'badge ok' : 'badge'}>{ruleText(rule)}</span>
      {rule.name ? <span class="badge">name {rule.name}</span> : null}
      {rule.shadowMode ? <span class="badge warn">shadow mode</span> : null}
      {rule.quotaMode ? <span class="badge">quota mode</span> : null}
      {rule.replaces.length > 0 ? <span class="badge">replaces {rule.replaces.join(', ')}</span> : null}
    </>
  );
}

function Descriptors({ nodes }: { nodes: DescriptorView[] }) {
  return (
    <ul>
      {nodes.map((node) => (
        <li key={`${node.key}=${node.value}`}>
          <code>
            {node.key}
            {node.value !== '' ? `=${node.value}` : ''}
          </code>{' '}
          <RuleBadges rule={node.rule} />
          {node.shareThreshold ? <span class="badge">share threshold</span> : null}
          {node.descriptors.length > 0 ? <Descriptors nodes={node.descriptors} /> : null}
        </li>
      ))}
    </ul>
  );
}

export function RulesView() {
  const config = useLoad((signal) => loadConfig(signal), [], 10_000);
  return (
    <section aria-labelledby="rl-rules">
      <h1 id="rl-rules">Loaded configuration</h1>
      {config.error ? (
        <ErrorBox error={config.error} context="Loading the configuration" service="rate limit" />
      ) : null}
      {config.data && !config.data.loaded ? <Notice title="No configuration is loaded" /> : null}
      {config.data?.loaded ? (
        <>
          <p class="muted">
            Loaded {config.data.loadedAt} from {config.data.files.join(', ') || 'no files'}.
          </p>
          {config.data.domains.map((d) => (
            <div key={d.domain} class="tree card">
              <h2>
                Domain <code>{d.domain}</code>
              </h2>
              <Descriptors nodes={d.descriptors} />
            </div>
          ))}
        </>
      ) : null}
      {config.loading && !config.data && !config.error ? <p role="status">Loading…</p> : null}
    </section>
  );
}
