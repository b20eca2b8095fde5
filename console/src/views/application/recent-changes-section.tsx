import { fromCombinedError } from "../../api-error.ts";
import { DataTable } from "../../components/data-table.tsx";
import { ErrorNotice } from "../../components/error-notice.tsx";
import { Empty, Loading } from "../../components/states.tsx";
import { Time } from "../../components/time.tsx";
import { useViewer, type Viewer } from "../../viewer.ts";
import { SHOWN, type Change, type RecentChanges } from "./use-recent-changes.ts";
import styles from "./recent-changes-section.module.css";

const COLUMNS = ["When", "Who", "What"];

/** The fields as the application's details name them, where REST's names say less. */
const FIELD_NAMES: Record<string, string> = { repoUrl: "repository URL", serviceUrl: "service URL" };

const ownerName = (owner: string | null) => owner ?? "no owner";

/**
 * Whether `previous` is the change right before the next one the viewer sees. A token sees an
 * application's events while one of its teams owns it (CONTRACT §17): after a change that gave the
 * application to another team, the changes made there are not in its list, so the next one it sees
 * (the one that gave it back) may not have changed the owner from `previous`'s.
 */
function isPredecessor(previous: Change, viewer: Viewer | undefined): boolean {
  if (!viewer || previous.owner === undefined) return false;
  if (viewer.teams === null || viewer.orgWide) return true;
  return previous.owner !== null && viewer.teams.includes(previous.owner);
}

/** What a change did, in words: "created", "changed description, tags", "changed owner from a to b". */
function whatChanged(change: Change, previous: Change | undefined, viewer: Viewer | undefined): string {
  if (change.kind === "created") return "created";
  const fields = change.changed.map((field) => {
    if (field !== "owner" || change.owner === undefined) return FIELD_NAMES[field] ?? field;
    const to = ownerName(change.owner);
    return previous && isPredecessor(previous, viewer)
      ? `owner from ${ownerName(previous.owner!)} to ${to}`
      : `owner to ${to}`;
  });
  return fields.length ? `changed ${fields.join(", ")}` : "changed";
}

/** The application's latest changes from the audit trail, newest first. */
export function RecentChangesSection({ changes }: { changes: RecentChanges }) {
  const viewer = useViewer().data?.me;
  if (changes.state === "loading") return <Loading what="the recent changes" />;
  if (changes.state === "forbidden")
    return <Empty>This token cannot read the audit trail: it needs the applications:read scope.</Empty>;
  if (changes.state === "failed") return <ErrorNotice error={fromCombinedError(changes.error)} />;
  const { changes: kept, total } = changes;
  if (kept.length === 0) return <Empty>The audit trail holds no change of this application.</Empty>;
  const rows = kept
    .map((change, i) => ({ change, what: whatChanged(change, kept[i - 1], viewer) }))
    .slice(-SHOWN)
    .reverse();
  const caption =
    total > rows.length ? `The latest ${rows.length} of ${total} changes, newest first` : "Changes, newest first";
  return (
    <DataTable label="Recent changes" caption={caption} columns={COLUMNS}>
      {rows.map(({ change, what }) => (
        <tr key={change.eventId}>
          <th scope="row" class={styles.when}>
            <Time value={change.timestamp} />
          </th>
          <td>{change.actor ?? "—"}</td>
          <td>{what}</td>
        </tr>
      ))}
    </DataTable>
  );
}
