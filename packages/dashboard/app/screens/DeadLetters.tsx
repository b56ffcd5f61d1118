import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client.js';
import { CardTable, PickList } from '../components/lists.js';
import { TitledSection } from '../components/sections.js';
import { ErrorMessage, formatDate, Status, useAction, useLoad } from '../components/ui.js';

export function DeadLetters() {
  const groups = useLoad(async () => unwrap(await api.GET('/api/admin/dead-letters')).data, []);
  const [group, setGroup] = useState<string | undefined>(undefined);
  const letters = useLoad(async () => {
    if (!group) return [];
    return unwrap(
      await api.GET('/api/admin/dead-letters/{group}', {
        params: { path: { group }, query: { limit: 100 } },
      }),
    ).data;
  }, [group]);
  const action = useAction();
  const [result, setResult] = useState('');

  const replay = (ids: string[]) =>
    action.run(async () => {
      if (!group || ids.length === 0) return;
      const answer = unwrap(
        await api.POST('/api/admin/dead-letters/{group}/replay', {
          params: { path: { group } },
          body: { ids },
        }),
      );
      setResult(`${answer.replayed} replayed`);
      await Promise.all([letters.reload(), groups.reload()]);
    });

  return (
    <TitledSection id="dead-title" title="Dead letters">
      <p class="muted">
        Messages a consumer gave up on after its retries. Replay sends them to the consumer again.
      </p>
      <ErrorMessage error={groups.error ?? action.error} />
      <p role="status">{result}</p>
      <PickList
        items={groups.data}
        idOf={(entry) => entry.group}
        nameOf={(entry) => entry.group}
        detailOf={(entry) => ` (${entry.count})`}
        picked={group}
        onPick={setGroup}
        empty="No dead letters."
      />
      {group && (
        <TitledSection
          id="letters-title"
          level={2}
          title={group}
          actions={
            <button
              type="button"
              disabled={action.pending || !letters.data?.length}
              onClick={() => void replay((letters.data ?? []).map((letter) => letter.id))}
            >
              Replay all shown
            </button>
          }
        >
          {letters.loading && <Status>Loading…</Status>}
          <CardTable
            columns={['Type', 'Reason', 'Attempts', 'Dead since', { label: 'Replay', hidden: true }]}
          >
            {(letters.data ?? []).map((letter) => (
              <tr key={letter.id}>
                <td data-label="Type">{letter.type}</td>
                <td data-label="Reason">{letter.reason}</td>
                <td data-label="Attempts" class="number">
                  {letter.attempts}
                </td>
                <td data-label="Dead since">{formatDate(letter.deadAt)}</td>
                <td>
                  <button type="button" disabled={action.pending} onClick={() => void replay([letter.id])}>
                    Replay
                  </button>
                </td>
              </tr>
            ))}
          </CardTable>
        </TitledSection>
      )}
    </TitledSection>
  );
}
