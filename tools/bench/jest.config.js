module.exports = { displayName: 'tool-bench', preset: '../../jest.preset.js', rootDir: '.' };
