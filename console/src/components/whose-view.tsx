import { useViewer, type Viewer } from "../viewer.ts";
import styles from "./whose-view.module.css";

/** Which applications the token sees, in words; nothing when team access is off (it sees them all). */
function teamsInWords({ teams, orgWide }: Viewer): string | null {
  if (teams === null) return null;
  if (orgWide) return "Org-wide view: all teams";
  if (teams.length === 0) return "No team: this token sees no application";
  return `${teams.length === 1 ? "Team" : "Teams"}: ${teams.join(", ")}`;
}

/** Whose view the console shows: the signed-in subject and the teams it sees (CONTRACT §17). */
export function WhoseView() {
  const viewer = useViewer().data?.me;
  if (!viewer) return null;
  const teams = teamsInWords(viewer);
  return (
    <p class={styles.whoseView}>
      <span>
        Signed in as <strong>{viewer.sub}</strong>
      </span>
      {teams && (
        <>
          <span aria-hidden="true" class={styles.separator}>
            ·
          </span>
          <span>{teams}</span>
        </>
      )}
    </p>
  );
}
