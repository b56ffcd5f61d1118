import { describe, expect, it } from 'vitest';
import { splitFullName } from './full-name.js';

describe('splitFullName', () => {
  it.each([
    ['Ada Lovelace', { firstName: 'Ada', lastName: 'Lovelace' }],
    ['  Ada   Lovelace ', { firstName: 'Ada', lastName: 'Lovelace' }],
    ['Ada\tLovelace\n', { firstName: 'Ada', lastName: 'Lovelace' }],
    // One word: what people call themselves on a form.
    ['Ada', { firstName: 'Ada' }],
    ["O'Brien", { firstName: "O'Brien" }],
    // ... unless a title makes it a surname.
    ['Mr. Smith', { lastName: 'Smith' }],
    // "Last, First", the last name of one or more words.
    ['Lovelace, Ada', { firstName: 'Ada', lastName: 'Lovelace' }],
    ['García Márquez, Gabriel', { firstName: 'Gabriel', lastName: 'García Márquez' }],
    ['de la Cruz, Juan', { firstName: 'Juan', lastName: 'de la Cruz' }],
    ['Smith, Dr. Jane Ann', { firstName: 'Jane Ann', lastName: 'Smith' }],
    ['Smith, John, Jr.', { firstName: 'John', lastName: 'Smith Jr.' }],
    // Particles start the last name.
    ['Ludwig van Beethoven', { firstName: 'Ludwig', lastName: 'van Beethoven' }],
    ['Leonardo da Vinci', { firstName: 'Leonardo', lastName: 'da Vinci' }],
    ['Charles de Gaulle', { firstName: 'Charles', lastName: 'de Gaulle' }],
    ['Ursula von der Leyen', { firstName: 'Ursula', lastName: 'von der Leyen' }],
    ['Juan de la Cruz', { firstName: 'Juan', lastName: 'de la Cruz' }],
    ['Jean-Luc Picard', { firstName: 'Jean-Luc', lastName: 'Picard' }],
    // Honorifics, nicknames and credentials are dropped; generational suffixes stay with the last name.
    ['Ms. Jane Doe III', { firstName: 'Jane', lastName: 'Doe III' }],
    ['Ada Lovelace PhD', { firstName: 'Ada', lastName: 'Lovelace' }],
    ['Ada Lovelace, PhD', { firstName: 'Ada', lastName: 'Lovelace' }],
    ['Sir Ada Lovelace', { firstName: 'Ada', lastName: 'Lovelace' }],
    ['Robert "Bob" Jones', { firstName: 'Robert', lastName: 'Jones' }],
    // The case is kept as typed.
    ['JOHN SMITH', { firstName: 'JOHN', lastName: 'SMITH' }],
    ['ada lovelace', { firstName: 'ada', lastName: 'lovelace' }],
    ['李 小龍', { firstName: '李', lastName: '小龍' }],
  ])('%j -> %j by either splitting rule', (fullName, expected) => {
    expect(splitFullName(fullName)).toEqual(expected);
    expect(splitFullName(fullName, 'first-word')).toEqual(expected);
    expect(splitFullName(fullName, 'last-word')).toEqual(expected);
  });

  it.each([
    // Two surnames (Spanish, Portuguese) stay together.
    ['Tomás Herrera Vidal', { firstName: 'Tomás', lastName: 'Herrera Vidal' }],
    ['João da Silva Santos', { firstName: 'João', lastName: 'da Silva Santos' }],
    ['María José de la Cruz García', { firstName: 'María', lastName: 'José de la Cruz García' }],
    ['Abdullah bin Abdulaziz Al Saud', { firstName: 'Abdullah', lastName: 'bin Abdulaziz Al Saud' }],
    ['Dr. Martin Luther King Jr.', { firstName: 'Martin', lastName: 'Luther King Jr.' }],
    ['Mary Jane Watson', { firstName: 'Mary', lastName: 'Jane Watson' }],
    ['Jan van der Berg PhD', { firstName: 'Jan', lastName: 'van der Berg' }],
  ])('first-word, the default: %j -> %j', (fullName, expected) => {
    expect(splitFullName(fullName)).toEqual(expected);
    expect(splitFullName(fullName, 'first-word')).toEqual(expected);
  });

  it.each([
    ['Tomás Herrera Vidal', { firstName: 'Tomás Herrera', lastName: 'Vidal' }],
    // Middle names stay with the first name; particles start the last name.
    ['Mary Jane Watson', { firstName: 'Mary Jane', lastName: 'Watson' }],
    ['Dr. Martin Luther King Jr.', { firstName: 'Martin Luther', lastName: 'King Jr.' }],
    ['Anna Maria della Rosa', { firstName: 'Anna Maria', lastName: 'della Rosa' }],
    ['Jan Willem van der Berg', { firstName: 'Jan Willem', lastName: 'van der Berg' }],
  ])('last-word: %j -> %j', (fullName, expected) => {
    expect(splitFullName(fullName, 'last-word')).toEqual(expected);
  });

  it.each([
    ['Tomás Herrera Vidal', { firstName: 'Tomás Herrera Vidal' }],
    ['  Dr.  Ada\tLovelace ', { firstName: 'Dr. Ada Lovelace' }],
    ['Lovelace, Ada', { firstName: 'Lovelace, Ada' }],
  ])('as-is: %j -> %j', (fullName, expected) => {
    expect(splitFullName(fullName, 'as-is')).toEqual(expected);
  });

  it.each([[''], ['   '], ['\u0000\u200b']])('%j has no name', (fullName) => {
    expect(splitFullName(fullName)).toEqual({});
  });

  it('never throws on odd input', () => {
    for (const odd of [',', ', ,', 'Mr', '"', '()', 'a,b,c,d', 'x'.repeat(10_000), `${'a '.repeat(500)}b`]) {
      expect(() => splitFullName(odd)).not.toThrow();
    }
  });
});
