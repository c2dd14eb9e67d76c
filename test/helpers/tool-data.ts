/** A tool's output data as a value: JSON text (JsonText, e.g. list_dir's answer) parsed, anything else as it is. */
import { JsonText } from '../../src/utils/json-text.js';

export function dataOf(output: { data: unknown }): unknown {
  return output.data instanceof JsonText ? JSON.parse(output.data.json) : output.data;
}
