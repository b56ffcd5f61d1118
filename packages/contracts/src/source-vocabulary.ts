/*
 * The value lists a source's settings take, in a module the dashboard's bundle imports
 * (`@lead-capture/contracts/source-vocabulary`) without the index's validators and ajv: its mapping
 * editor offers exactly what the API accepts.
 */
export { CSV_IMPORT_SOURCE, LEAD_FIELDS, MAPPING_TARGETS, type MappingTarget } from './events/common.js';
export {
  DEFAULT_NAME_SPLIT,
  NAME_SPLIT_RULES,
  type NameSplitRule,
  SOURCE_FORMATS,
  type SourceFormat,
} from './events/source.js';
