import { useState } from 'preact/hooks';
import { api, inPath, type Pipeline, unwrap } from '../api/client.js';
import { CheckField, TextField } from '../components/fields.js';
import { EditorForm } from '../components/forms.js';
import { ErrorMessage, useAction, useLoad } from '../components/ui.js';

interface StageDraft {
  id?: string;
  name: string;
  color: string;
  isWin: boolean;
  isLost: boolean;
}

const NEW_PIPELINE: { name: string; isDefault: boolean; stages: StageDraft[] } = {
  name: '',
  isDefault: false,
  stages: [{ name: 'New', color: '#3b82f6', isWin: false, isLost: false }],
};

export function Pipelines() {
  const pipelines = useLoad(async () => unwrap(await api.GET('/api/pipelines')), []);
  const [editing, setEditing] = useState<string | 'new' | undefined>(undefined);
  const current = pipelines.data?.find((pipeline) => pipeline.id === editing);

  return (
    <section aria-labelledby="pipelines-title">
      <div class="toolbar">
        <h1 id="pipelines-title">Pipelines</h1>
        <button type="button" onClick={() => setEditing('new')}>
          New pipeline
        </button>
      </div>
      <ErrorMessage error={pipelines.error} />
      <ul>
        {(pipelines.data ?? []).map((pipeline) => (
          <li key={pipeline.id}>
            <button type="button" class="link" onClick={() => setEditing(pipeline.id)}>
              {pipeline.name}
            </button>
            {pipeline.isDefault && <span class="badge">default</span>} ·{' '}
            {pipeline.stages.map((stage) => stage.name).join(' → ')}
          </li>
        ))}
      </ul>
      {editing && (
        <PipelineEditor
          key={editing}
          pipeline={editing === 'new' ? undefined : current}
          onDone={() => {
            setEditing(undefined);
            void pipelines.reload();
          }}
        />
      )}
    </section>
  );
}

function PipelineEditor({ pipeline, onDone }: { pipeline: Pipeline | undefined; onDone: () => void }) {
  const [draft, setDraft] = useState(() =>
    pipeline
      ? {
          name: pipeline.name,
          isDefault: pipeline.isDefault,
          stages: [...pipeline.stages]
            .sort((a, b) => a.order - b.order)
            .map(({ id, name, color, isWin, isLost }) => ({
              id,
              name,
              color,
              isWin,
              isLost,
            })),
        }
      : structuredClone(NEW_PIPELINE),
  );
  const action = useAction();
  const setStage = (index: number, changes: Partial<StageDraft>) =>
    setDraft({
      ...draft,
      stages: draft.stages.map((stage, i) => (i === index ? { ...stage, ...changes } : stage)),
    });
  const moveStage = (index: number, by: number) => {
    const stages = [...draft.stages];
    const [stage] = stages.splice(index, 1);
    if (stage) stages.splice(index + by, 0, stage);
    setDraft({ ...draft, stages });
  };

  return (
    <EditorForm
      title={pipeline ? `Edit ${pipeline.name}` : 'New pipeline'}
      action={action}
      onSubmit={async () => {
        const body = {
          ...draft,
          stages: draft.stages.map((stage, order) => ({ ...stage, order })),
        };
        if (pipeline)
          unwrap(await api.PUT('/api/pipelines/{id}', { params: { path: { id: pipeline.id } }, body }));
        else unwrap(await api.POST('/api/pipelines', { body }));
      }}
      submitLabel="Save pipeline"
      onCancel={onDone}
      onDone={onDone}
      remove={
        pipeline &&
        !pipeline.isDefault && {
          label: 'Delete pipeline',
          question: `Delete the pipeline ${pipeline.name} and its stages?`,
          run: async () => {
            unwrap(await api.DELETE('/api/pipelines/{id}', inPath({ id: pipeline.id })));
          },
        }
      }
    >
      <TextField label="Name" required value={draft.name} onValue={(name) => setDraft({ ...draft, name })} />
      <CheckField
        label="Default pipeline for new leads"
        checked={draft.isDefault}
        onChange={(checked) => setDraft({ ...draft, isDefault: checked })}
      />
      <fieldset>
        <legend>Stages, in order</legend>
        <ol class="stages">
          {draft.stages.map((stage, index) => (
            <li key={stage.id ?? `new-${index}`}>
              <input
                aria-label={`Stage ${index + 1} name`}
                required
                value={stage.name}
                onInput={(e) => setStage(index, { name: e.currentTarget.value })}
              />
              <input
                type="color"
                aria-label={`Stage ${index + 1} colour`}
                value={stage.color}
                onInput={(e) => setStage(index, { color: e.currentTarget.value })}
              />
              <CheckField
                label="Win"
                checked={stage.isWin}
                onChange={(checked) => setStage(index, { isWin: checked })}
              />
              <CheckField
                label="Lost"
                checked={stage.isLost}
                onChange={(checked) => setStage(index, { isLost: checked })}
              />
              <button
                type="button"
                class="ghost"
                aria-label={`Move stage ${index + 1} up`}
                disabled={index === 0}
                onClick={() => moveStage(index, -1)}
              >
                ↑
              </button>
              <button
                type="button"
                class="ghost"
                aria-label={`Move stage ${index + 1} down`}
                disabled={index === draft.stages.length - 1}
                onClick={() => moveStage(index, 1)}
              >
                ↓
              </button>
              <button
                type="button"
                class="ghost"
                aria-label={`Remove stage ${index + 1}`}
                disabled={draft.stages.length === 1}
                onClick={() =>
                  setDraft({
                    ...draft,
                    stages: draft.stages.filter((_, i) => i !== index),
                  })
                }
              >
                ✕
              </button>
            </li>
          ))}
        </ol>
        <button
          type="button"
          onClick={() =>
            setDraft({
              ...draft,
              stages: [...draft.stages, { name: '', color: '#64748b', isWin: false, isLost: false }],
            })
          }
        >
          Add stage
        </button>
      </fieldset>
    </EditorForm>
  );
}
