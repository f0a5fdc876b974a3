module.exports = { displayName: 'tool-deploy', preset: '../../jest.preset.js', rootDir: '.' };
