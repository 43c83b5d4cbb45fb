#!/usr/bin/env node
// The CDK app (`cdk.json` runs it with tsx): `npx cdk synth` works offline, `npx cdk deploy` deploys.
import { App } from 'aws-cdk-lib';
import { buildServiceApp } from '../lib/app.js';

buildServiceApp(new App());
