import { describe, expect, it } from 'vitest';
import { addressRefusal, urlProblem } from './target.js';

const strict = { allowHttp: false, allowPrivate: false };

describe('addressRefusal', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.100.100.200', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'linkLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['64:ff9b::a9fe:a9fe', 'rfc6052'],
    ['2002:7f00:1::1', '6to4'],
  ])('refuses %s (%s)', (address, range) => {
    expect(addressRefusal(address, strict)).toContain(range);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111'])(
    'lets the public address %s through',
    (address) => {
      expect(addressRefusal(address, strict)).toBeUndefined();
    },
  );

  it('lets everything through when private targets are allowed', () => {
    expect(addressRefusal('127.0.0.1', { allowPrivate: true })).toBeUndefined();
  });
});

describe('urlProblem', () => {
  it('takes an https URL with a host name', () => {
    expect(urlProblem('https://hooks.example.com/leads?team=1', strict)).toBeUndefined();
  });

  it.each([
    ['http://hooks.example.com/', /https/],
    ['ftp://hooks.example.com/', /https/],
    ['https://[::1]/x', /loopback/],
    ['https://0x7f000001/x', /loopback/],
    ['https://a:b@hooks.example.com/', /credentials/],
    ['https://hooks.example.com/#x', /fragment/],
    [`https://hooks.example.com/${'a'.repeat(2100)}`, /2048/],
  ])('refuses %s', (url, problem) => {
    expect(urlProblem(url, strict)).toMatch(problem);
  });

  it('takes http when allowed', () => {
    expect(urlProblem('http://hooks.example.com/', { ...strict, allowHttp: true })).toBeUndefined();
  });
});
