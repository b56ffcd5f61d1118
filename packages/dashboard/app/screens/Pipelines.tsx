import { useState } from 'preact/hooks';
import { api, inPath, type Pipeline, unwrap } from '../api/client.js';
import { CheckField, listEdits } from '../components/fields.js';
import { type RecordCalls, RecordEditor, RecordList } from '../components/records.js';
import { useLoad } from '../components/ui.js';

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

type PipelineBody = { name: string; isDefault: boolean; stages: Array<StageDraft & { order: number }> };

const PIPELINE_CALLS: RecordCalls<PipelineBody> = {
  create: async (body) => unwrap(await api.POST('/api/pipelines', { body })),
  update: async (id, body) => unwrap(await api.PUT('/api/pipelines/{id}', { ...inPath({ id }), body })),
  remove: async (id) => unwrap(await api.DELETE('/api/pipelines/{id}', inPath({ id }))),
};

export function Pipelines() {
  const pipelines = useLoad(async () => unwrap(await api.GET('/api/pipelines')), []);
  return (
    <RecordList
      titleId="pipelines-title"
      title="Pipelines"
      noun="pipeline"
      records={pipelines}
      detailOf={(pipeline) => (
        <>
          {pipeline.isDefault && <span class="badge">default</span>} ·{' '}
          {pipeline.stages.map((stage) => stage.name).join(' → ')}
        </>
      )}
      editor={({ key, record, onDone }) => <PipelineEditor key={key} pipeline={record} onDone={onDone} />}
    />
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
  const stages = listEdits(draft.stages, (list) => setDraft({ ...draft, stages: list }));

  return (
    <RecordEditor
      noun="pipeline"
      record={pipeline}
      name={draft.name}
      onName={(name) => setDraft({ ...draft, name })}
      calls={PIPELINE_CALLS}
      body={() => ({ ...draft, stages: draft.stages.map((stage, order) => ({ ...stage, order })) })}
      removeQuestion={(name) => `Delete the pipeline ${name} and its stages?`}
      removable={!pipeline?.isDefault}
      onDone={onDone}
    >
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
                onInput={(e) => stages.change(index, { name: e.currentTarget.value })}
              />
              <input
                type="color"
                aria-label={`Stage ${index + 1} colour`}
                value={stage.color}
                onInput={(e) => stages.change(index, { color: e.currentTarget.value })}
              />
              <CheckField
                label="Win"
                checked={stage.isWin}
                onChange={(checked) => stages.change(index, { isWin: checked })}
              />
              <CheckField
                label="Lost"
                checked={stage.isLost}
                onChange={(checked) => stages.change(index, { isLost: checked })}
              />
              <button
                type="button"
                class="ghost"
                aria-label={`Move stage ${index + 1} up`}
                disabled={index === 0}
                onClick={() => stages.move(index, -1)}
              >
                ↑
              </button>
              <button
                type="button"
                class="ghost"
                aria-label={`Move stage ${index + 1} down`}
                disabled={index === draft.stages.length - 1}
                onClick={() => stages.move(index, 1)}
              >
                ↓
              </button>
              <button
                type="button"
                class="ghost"
                aria-label={`Remove stage ${index + 1}`}
                disabled={draft.stages.length === 1}
                onClick={() => stages.remove(index)}
              >
                ✕
              </button>
            </li>
          ))}
        </ol>
        <button
          type="button"
          onClick={() => stages.add({ name: '', color: '#64748b', isWin: false, isLost: false })}
        >
          Add stage
        </button>
      </fieldset>
    </RecordEditor>
  );
}
