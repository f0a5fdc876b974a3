module.exports = { displayName: 'oms-service', preset: '../../jest.preset.js', rootDir: '.' };
